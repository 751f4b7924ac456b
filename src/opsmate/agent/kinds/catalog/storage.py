"""Storage: claims, classes, volumes, mounts and disks (k8sgpt's PersistentVolumeClaim and
Storage analyzers; ITBench / SRE-benchmark storage faults; RCAEval disk; the classic
application's full disk)."""

from __future__ import annotations

from opsmate.agent.kinds.card import Role, Trait, read
from opsmate.agent.kinds.catalog.base import _POD_TROUBLE, _REQUESTS, variant, variants
from opsmate.agent.observe.facts import FactKind as K

_WAL_ARCHIVE = (
    r"archive command failed|archiving (?:write-ahead log|WAL) file .* failed"
    r"|could not archive|WAL archiving (?:is )?failing|archive-push .* (?:failed|error)"
)

_CLAIMS = read(
    "list_objects", "the claims and their phase", kind="PersistentVolumeClaim", namespace="{ns}"
)
_CLASSES = read("list_objects", "storage classes", kind="StorageClass")
# the share of each volume's inodes in use: ENOSPC with bytes free is a volume out of files
_INODES = read(
    "query_metrics",
    "the share of each volume's inodes in use",
    query='kubelet_volume_stats_inodes_used{namespace="{ns}"} / '
    'kubelet_volume_stats_inodes{namespace="{ns}"}',
    type="range",
)

# the free inodes of each volume: at zero, no file can be created however many bytes are free
_INODES_FREE = read(
    "query_metrics",
    "the free inodes of each volume",
    query='kubelet_volume_stats_inodes_free{namespace="{ns}"}',
    type="range",
)

CARDS = (
    variant(
        K.MISSING_REFERENCE,
        "storageclass-missing",
        "A claim requests a StorageClass that does not exist",
        reasons=("StorageClassNotFound",),
        words=r"storageclass(?:\.storage\.k8s\.io)? \S+ not found",
        example=("ProvisioningFailed", 'storageclass.storage.k8s.io "fast-ssd" not found'),
        phrase="a StorageClass that does not exist",
        check="list the classes and the claim's: `kubectl get storageclass` and `kubectl -n "
        "{ns} get pvc`",
        mitigation="point the claim (or the StatefulSet's volumeClaimTemplate) at an existing "
        "StorageClass; a bound claim's class cannot change, so recreate it (a person decides)",
        topics=("storage", "storageclass", "pvc", "claim", "volume", "provision"),
        asks=r"pvc|volume|storage|disk|pending|存储",
        # a claim that cannot be provisioned keeps its pod pending: a running workload whose
        # claims are bound is not hurt by a template naming a class that is gone
        explains=frozenset({K.POD_PENDING, K.NOT_READY, K.ALERT}),
        reads=(_CLAIMS, _CLASSES),
        catalog=("k8sgpt:PersistentVolumeClaim", "HolmesGPT:pvc storage class", "ITBench:storage"),
    ),
    variant(
        K.MISSING_REFERENCE,
        "volume-not-found",
        "A claim names a PersistentVolume that does not exist",
        reasons=("VolumeNotFound",),
        phrase="a PersistentVolume that does not exist",
        reads=(_CLAIMS, read("list_objects", "volumes", kind="PersistentVolume")),
        catalog=("k8sgpt:PersistentVolumeClaim",),
    ),
    variant(
        K.MISSING_REFERENCE,
        "secret-missing",
        "Pods reference a Secret that does not exist",
        reasons=("SecretNotFound",),
        words=r'secrets? "[^"]+" not found|secret \S+ not found',
        example=(
            "FailedMount",
            'MountVolume.SetUp failed for volume "keys" : secret "app-keys" not found',
        ),
        phrase="a Secret that does not exist",
        check="confirm the Secret is missing: `kubectl -n {ns} get secret {target}` and which "
        "pods reference it",
        mitigation="create the Secret (from the team's secret store) or correct the reference "
        "in {workload}",
        topics=("secret", "mount", "volume", "credential"),
        catalog=("HolmesGPT:secret not found", "k8sgpt:Pod", "k8sgpt:Ingress"),
    ),
    variant(
        K.MISSING_REFERENCE,
        "configmap-missing",
        "Pods reference a ConfigMap that does not exist",
        reasons=("ConfigMapNotFound",),
        words=r'configmaps? "[^"]+" not found',
        example=(
            "FailedMount",
            'MountVolume.SetUp failed for volume "conf" : configmap "app-conf" not found',
        ),
        phrase="a ConfigMap that does not exist",
        mitigation="create the ConfigMap or correct the reference in {workload}",
        topics=("configmap", "config map", "mount", "volume"),
        catalog=("HolmesGPT:configmap mount issue", "k8sgpt:ConfigMap"),
    ),
    variant(
        K.MISSING_REFERENCE,
        "config-key-missing",
        "Pods reference a key a ConfigMap / Secret does not have",
        words=r"couldn'?t find key",
        example=("Failed", "Error: couldn't find key db-url in ConfigMap shop/app-config"),
        phrase="a ConfigMap or Secret key that does not exist",
        mitigation="add the key to the ConfigMap / Secret or correct the reference in {workload}",
        topics=("configmap", "secret", "key", "env"),
        catalog=("k8sgpt:Pod", "HolmesGPT:config change impact"),
    ),
    variant(
        K.MISSING_REFERENCE,
        "priorityclass-missing",
        "Pods name a PriorityClass that does not exist",
        words=r"priorityclass",
        example=("FailedCreate", "no PriorityClass with name high was found"),
        phrase="a PriorityClass that does not exist",
        catalog=("ITBench:admission",),
    ),
    variant(
        K.MISCONFIGURATION,
        "volume-multi-attach",
        "A ReadWriteOnce volume is attached to another node",
        reasons=("FailedAttachVolume",),
        words=r"multi-attach|already (?:used|attached|exclusively attached)",
        example=(
            "FailedAttachVolume",
            'Multi-Attach error for volume "pvc-1" Volume is already used by pod(s) web-1',
        ),
        conclusive=True,
        specificity=3.0,
        phrase="a ReadWriteOnce volume still attached elsewhere",
        check="see which pod and node hold the volume: `kubectl -n {ns} describe {obj}` and "
        "`kubectl get volumeattachment`",
        mitigation="run one replica per RWO claim (a StatefulSet, or Recreate strategy), or "
        "use a ReadWriteMany class (a person decides)",
        topics=("volume", "attach", "multi-attach", "readwriteonce", "storage"),
        catalog=("ITBench:storage", "k8sgpt:PersistentVolumeClaim"),
    ),
    variant(
        K.MISCONFIGURATION,
        "volume-mount-failed",
        "A volume cannot be mounted",
        reasons=("FailedMount",),
        example=("FailedMount", "Unable to attach or mount volumes: timed out waiting"),
        phrase="a volume that cannot be mounted",
        check="read the kubelet's mount error: " + "`kubectl -n {ns} describe {obj}` (Events)",
        mitigation="fix what the mount error names (the volume's source object, the driver, "
        "the node)",
        topics=("mount", "volume", "storage", "csi"),
        catalog=("k8sgpt:Pod", "ITBench:storage"),
    ),
    variant(
        K.NOT_READY,
        "claim-pending",
        "A PersistentVolumeClaim stays Pending",
        reasons=("ClaimPending",),
        phrase="has a claim that is not bound",
        catalog=("k8sgpt:PersistentVolumeClaim",),
    ),
    variant(
        K.MISCONFIGURATION,
        "no-default-storageclass",
        "A claim names no class and the cluster has no default",
        reasons=("NoDefaultStorageClass",),
        phrase="no default StorageClass",
        reads=(_CLAIMS, _CLASSES),
        catalog=("k8sgpt:Storage",),
    ),
    variant(
        K.SATURATION,
        "inodes-exhausted",
        "A volume has no free inodes: creating a file fails (ENOSPC) while bytes are free",
        reasons=("inodes_exhausted",),
        words=r"inodes? (?:exhausted|used up)|no free inodes|out of inodes",
        traits=frozenset({Trait.CASCADE, Trait.OWN_LIMIT}),
        example=("inodes_exhausted", "kubelet_volume_stats_inodes_used / _inodes at 1.0"),
        conclusive=True,
        specificity=3.2,
        phrase="a volume out of inodes (too many files; bytes are still free)",
        check="compare the volume's inodes with its bytes: `kubectl -n {ns} exec {obj} -- df -i` "
        "against `df -h`, and kubelet_volume_stats_inodes_used / kubelet_volume_stats_inodes",
        mitigation="delete the many small files (caches, temp, old packages) or move the data to a "
        "filesystem with more inodes (a person decides)",
        topics=("inode", "inodes", "disk", "files", "volume", "enospc"),
        asks=r"inode|files?|space|disk|enospc",
        reads=(_INODES, _INODES_FREE),
        evidence="kubelet_volume_stats_inodes_used at kubelet_volume_stats_inodes (or "
        "node_filesystem_files_free at 0) while the bytes used are below the size",
        rules_out="inodes free on the volume (then: its bytes)",
        catalog=("SREGym: OS limits", "classic: inode exhaustion"),
    ),
    variant(
        K.SATURATION,
        "disk-full",
        "A disk or volume is full",
        traits=frozenset({Trait.CASCADE, Trait.OWN_LIMIT}),
        words=r"no space left|disk (?:is )?full|ENOSPC|disk quota exceeded|flood[- ]stage"
        r"|read-only.*disk|not enough space|insufficient (?:disk )?space",
        example=("resource_exhausted", "write /data/wal: no space left on device"),
        conclusive=True,
        specificity=3.0,
        phrase="a full disk",
        check="compare the volume's use with its size: `kubectl -n {ns} exec {obj} -- df -h` "
        "and kubelet_volume_stats_used_bytes",
        mitigation="free space or expand the volume of {workload} (a person decides; expanding "
        "needs a class with allowVolumeExpansion)",
        topics=("disk", "space", "full", "volume", "storage", "pvc"),
        asks=r"disk|space|full|storage|volume|磁盘",
        evidence="ENOSPC in the application's log, kubelet_volume_stats_* series",
        catalog=("RCAEval:disk", "ITBench:storage", "HolmesGPT"),
        # what kept filling it: a database that keeps its write-ahead log for an archiver
        # that fails; never a failing call elsewhere (a full disk is the process's own)
        deeper=frozenset({K.NODE_PROBLEM, K.CONFIG_ERROR}),
        # a full disk may be one out of inodes: ENOSPC says either
        deeper_cards=("wal-archive-failing", "wal-archive-failing-warning", "inodes-exhausted"),
        reads=(_INODES, _INODES_FREE),
    ),
    *variants(
        (
            (K.LOG_ERROR, "wal-archive-failing"),
            (K.LOG_WARNING, "wal-archive-failing-warning"),
        ),
        "A database keeps its write-ahead log because archiving it fails",
        words=_WAL_ARCHIVE,
        any_level=True,  # PostgreSQL logs "archive command failed" as a LOG line
        example=(
            "",
            'archiving write-ahead log file "00000001000000190000003A" failed too '
            "many times, will try again later",
        ),
        role=Role.CAUSE,
        traits=frozenset(),
        explains=_POD_TROUBLE | _REQUESTS,
        specificity=2.9,
        phrase="write-ahead log (WAL) kept on disk while archiving it fails",
        check="read the archiver's errors (archive_command / pgBackRest / WAL-G) and "
        "pg_stat_archiver (failed_count, last_failed_wal); compare pg_wal's size with "
        "the volume",
        mitigation="fix the archive target (credentials, bucket, network) so the backlog "
        "drains; expand the volume if it is about to fill (a person decides)",
        topics=("wal", "archive", "postgres", "disk", "backup"),
        asks=r"wal|archiv|backup|disk|space",
        evidence="the database's log (archive command failed, archiving ... failed too "
        "many times), pgMonitor ccp_archive_command_status_*",
        catalog=(
            "classic: WAL archiving failure fills pg_wal",
            "PostgreSQL docs: continuous archiving",
        ),
    ),
    variant(
        K.NODE_PROBLEM,
        "node-disk-pressure",
        "Node under disk pressure",
        words=r"diskpressure|disk pressure|ephemeral-storage|nodefs|imagefs",
        example=("KubeletHasDiskPressure", "DiskPressure (KubeletHasDiskPressure)"),
        phrase="a node under disk pressure",
        check="check the node's disk: `kubectl describe node {target}` (Conditions, Events)",
        mitigation="free disk on the node (images, logs, emptyDir) or move workloads (a person "
        "decides)",
        topics=("node", "disk", "pressure", "evict", "ephemeral"),
        catalog=("k8sgpt:Node", "ITBench:disk"),
    ),
)
