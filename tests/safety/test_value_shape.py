"""Secret values under any key of annotations, labels and env are judged by their shape
(random-looking, a known token format); trace ids, git shas, UUIDs and words stay."""

from __future__ import annotations

from opsmate.tools.redact import MASK, Redactor

SECRET = "q8Zr2LmP0vXw9TtY4sKd7Hn3"  # random-looking, under a harmless-looking key
GHP = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4"
KEEP = {
    "trace": "4bf92f3577b34da6a3ce929d0e0e4736",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "git": "9fceb02d0ae598e95dc970b74767f19372d61af8",
    "note": "deployed by the release pipeline",
    "image": "registry.example.com/shop/order-service:v2.4.0",
    "hash": "6c8f9d7b4d",
}


def test_annotations_labels_and_env_are_judged_by_value() -> None:
    obj = {
        "kind": "Deployment",
        "metadata": {
            "annotations": {"acme.io/deploy-hook": SECRET, **KEEP},
            "labels": {"app": "order-service", "acme.io/ci": GHP},
        },
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "env": [
                                {"name": "ACME_SIGNING", "value": SECRET},
                                {"name": "DB_POOL_SIZE", "value": "10"},
                                {"name": "TRACE_SAMPLE", "value": KEEP["trace"]},
                            ]
                        }
                    ]
                }
            }
        },
    }
    out, n = Redactor().redact_obj(obj)
    meta = out["metadata"]
    assert meta["annotations"]["acme.io/deploy-hook"] == MASK
    assert meta["labels"]["acme.io/ci"] == MASK and meta["labels"]["app"] == "order-service"
    for key, value in KEEP.items():
        assert meta["annotations"][key] == value, key
    env = out["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env[0]["value"] == MASK
    assert env[1]["value"] == "10" and env[2]["value"] == KEEP["trace"]
    assert n >= 3
