"""Operating-system and runtime limits: file descriptors, shared memory, read-only root
filesystems, process ids, heaps, CPU throttling (SRE-benchmark OS limits; Chaos Mesh
StressChaos / JVMChaos; RCAEval cpu / mem / socket)."""

from __future__ import annotations

from opsmate.agent.kinds.card import Trait, read
from opsmate.agent.kinds.catalog.base import THROTTLING, variant
from opsmate.agent.observe.facts import FactKind as K

_RES = read("query_metrics", "CPU, memory and throttling per pod")

CARDS = (
    variant(
        K.SATURATION,
        "too-many-open-files",
        "The process runs out of file descriptors",
        traits=frozenset({Trait.CASCADE, Trait.OWN_LIMIT}),
        words=r"too many open files|EMFILE|ulimit|open files limit|maximum open files"
        r"|file descriptor",
        example=("resource_exhausted", "accept tcp [::]:8080: accept4: too many open files"),
        conclusive=True,
        specificity=3.0,
        phrase="a file-descriptor limit the process runs out of",
        check="compare open files with the limit in the container: `kubectl -n {ns} exec {obj} "
        "-- sh -c 'ulimit -n; ls /proc/1/fd | wc -l'`",
        mitigation="raise the nofile limit (runtime / securityContext / the image) or fix the "
        "descriptor leak (a person decides)",
        topics=("file descriptor", "open files", "ulimit", "emfile", "limit"),
        asks=r"open files|file descriptor|ulimit|emfile",
        catalog=("SREGym:os limits", "RCAEval:socket", "classic: fds"),
    ),
    variant(
        K.SATURATION,
        "inotify-limit",
        "The node's inotify watch limit (fs.inotify.max_user_watches) stops file watchers",
        traits=frozenset({Trait.OWN_LIMIT}),
        reasons=("inotify_exhausted",),
        example=(
            "inotify_exhausted",
            "Failed to start filesystem watcher for folder: failed to setup inotify handler. "
            "Please increase inotify limits",
        ),
        conclusive=True,
        specificity=3.0,
        phrase="the node's inotify limit (fs.inotify.max_user_watches) that stops file watchers",
        check="read the limit on the pod's node (`sysctl fs.inotify.max_user_watches "
        "fs.inotify.max_user_instances` from a debug pod) and what normally raises it (a "
        "node-tuning DaemonSet: does it run on that node?)",
        mitigation="raise the inotify limits on the node (sysctl, or the tuning DaemonSet's "
        "node selector for the new nodes); a person decides",
        topics=("inotify", "max_user_watches", "sysctl", "watcher", "kernel limit"),
        asks=r"inotify|watch|sync|changes? (?:are|is) (?:not )?(?:seen|noticed|picked)",
        reads=(read("list_objects", "node-tuning DaemonSets", kind="DaemonSet"),),
        catalog=("SREGym:os limits", "classic: inotify limits after a node-pool change"),
    ),
    variant(
        K.SATURATION,
        "shm-too-small",
        "/dev/shm too small for the process (databases, browsers)",
        traits=frozenset({Trait.CASCADE, Trait.OWN_LIMIT}),
        reasons=("shm_exhausted",),
        words=r"/dev/shm|shared memory segment|could not resize shared memory|shm_open"
        r"|No space left on device.*shm",
        example=(
            "shm_exhausted",
            'could not resize shared memory segment "/PostgreSQL.123" to 8388608 '
            "bytes: No space left on device",
        ),
        conclusive=True,
        specificity=3.0,
        phrase="a /dev/shm too small for the process",
        check="`kubectl -n {ns} exec {obj} -- df -h /dev/shm` (64M is the runtime default)",
        mitigation="mount an emptyDir with medium: Memory at /dev/shm sized for {workload} (a "
        "reviewed change)",
        topics=("shm", "shared memory", "/dev/shm", "postgres", "chrome"),
        catalog=("SREGym:os limits", "classic: /dev/shm"),
    ),
    variant(
        K.LOG_ERROR,
        "read-only-filesystem",
        "The process writes to a read-only root filesystem",
        words=r"read-only file ?system|EROFS|readonly file ?system",
        example=("", "open /tmp/cache/index: read-only file system"),
        conclusive=True,
        specificity=3.0,
        phrase="writes to a read-only filesystem",
        check="compare where it writes with the pod's securityContext.readOnlyRootFilesystem and "
        "its volume mounts",
        mitigation="mount a writable emptyDir where {workload} writes, or revert "
        "readOnlyRootFilesystem (a reviewed change)",
        topics=("read-only", "readonly", "filesystem", "erofs", "securitycontext"),
        catalog=("SREGym:os limits", "classic: read-only root"),
    ),
    variant(
        K.LOG_ERROR,
        "permission-denied-path",
        "The process may not write or read a path (user, fsGroup)",
        words=r"permission denied|EACCES|operation not permitted",
        example=("", "mkdir /var/lib/app/data: permission denied"),
        specificity=2.6,
        phrase="a path the process has no permission on",
        check="compare the container's user (runAsUser, fsGroup) with the path's owner",
        mitigation="set fsGroup / runAsUser for {workload} or fix the volume's ownership (a "
        "reviewed change)",
        topics=("permission", "fsgroup", "runasuser", "securitycontext", "volume"),
        catalog=("SREGym:os limits",),
    ),
    variant(
        K.SATURATION,
        "pids-exhausted",
        "The container cannot start threads or processes (pids limit)",
        traits=frozenset({Trait.CASCADE, Trait.OWN_LIMIT}),
        reasons=("pids_exhausted",),
        words=r"fork: (?:retry: )?Resource temporarily unavailable|unable to create (?:new )?"
        r"native thread|pthread_create failed|EAGAIN.*thread|cannot allocate thread",
        example=("pids_exhausted", "java.lang.OutOfMemoryError: unable to create native thread"),
        conclusive=True,
        specificity=3.0,
        phrase="a PID / thread limit the container runs out of",
        topics=("pid", "thread", "fork", "limit"),
        catalog=("SREGym:os limits",),
    ),
    variant(
        K.SATURATION,
        "heap-exhausted",
        "The runtime's heap is exhausted (JVM / Node.js / Go)",
        traits=frozenset({Trait.CASCADE, Trait.OWN_LIMIT}),
        words=r"java heap space|OutOfMemoryError|heap out of memory|JavaScript heap"
        r"|GC overhead limit|Metaspace|runtime: out of memory",
        example=("out_of_memory", "java.lang.OutOfMemoryError: Java heap space"),
        specificity=2.8,
        phrase="an exhausted heap",
        check="compare heap use with -Xmx / --max-old-space-size and the container limit",
        mitigation="size the heap to the limit or fix what grows (a person decides)",
        topics=("heap", "memory", "oom", "outofmemory", "gc", "leak"),
        catalog=("ChaosMesh:JVMChaos", "HolmesGPT:memory leak"),
    ),
    variant(
        K.SATURATION,
        "memory-leak",
        "Memory grows steadily towards the limit (a leak)",
        traits=frozenset({Trait.CASCADE, Trait.OWN_LIMIT}),
        reasons=("MemoryLeakPattern", "memory_growth"),
        phrase="memory that grows until the limit",
        reads=(_RES,),
        topics=("memory", "leak", "oom", "growth"),
        catalog=("HolmesGPT:memory leak", "RCAEval:mem", "ChaosMesh:StressChaos memory"),
    ),
    variant(
        K.SATURATION,
        "cpu-throttled",
        "CPU saturated or throttled at its limit",
        words=r"throttl|cpu (?:saturat|pinned|at (?:its )?limit)|cfs",
        example=("resource_exhausted", "container cpu throttled 85% of periods"),
        phrase="CPU pinned at its limit",
        # pinned because it is not scaled out: its autoscaler cannot compute utilization (a
        # container without a CPU request)
        deeper_cards=("hpa-missing-requests",),
        reads=(THROTTLING, _RES),
        topics=("cpu", "throttl", "limit", "saturat"),
        asks=r"cpu|throttl|slow|latency",
        catalog=("RCAEval:cpu", "ChaosMesh:StressChaos cpu", "AIOpsLab:cpu hog"),
    ),
    variant(
        K.SATURATION,
        "evicted-over-request",
        "A container used more than it requested while its node ran low",
        traits=frozenset({Trait.CASCADE, Trait.OWN_LIMIT}),
        reasons=("Evicted",),
        phrase="usage above its request on a node that ran low",
        catalog=("k8sgpt:Pod",),
    ),
)
