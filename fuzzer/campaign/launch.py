"""How a campaign is launched: where its programs run (this process, worker
processes, Ray actors), on how many workers, under which limits, and for how long.

``dcefuzz run`` parses its options and asks here; each decision is one function
with the reason it is what it is.  A combination of options that cannot be
launched is a :class:`PlanError`, naming the option at fault where there is one.
:func:`start` then runs the campaign the :class:`Plan` describes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum

from fuzzer.campaign.config import Budget, Config
from fuzzer.campaign.state import DEFAULT_TARGETS, targets_text
from fuzzer.limits import CACHE, PoolLimits

#: seconds a campaign runs when given neither a duration nor a number of programs
DEFAULT_SECONDS: float = 60.0


class PlanError(ValueError):
    """Options that cannot be launched together; ``option`` names the one at fault
    (None: the combination itself)."""

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option


class Launch(Enum):
    """Where the campaign's programs run."""

    #: in the process of the command, without isolation (``--jobs 0``)
    IN_PROCESS = "in-process"
    #: in worker processes on this machine (``--jobs N`` or ``--devices``)
    POOL = "pool"
    #: in Ray actors on a cluster (``--ray``)
    RAY = "ray"


@dataclass(frozen=True)
class Plan:
    """How one campaign is launched."""

    launch: Launch
    #: worker processes asked for (``--jobs``)
    jobs: int
    #: the GPUs of ``--devices``, one worker each (None: not given)
    gpus: list[str] | None
    #: the workers that share this machine's cores
    workers: int
    #: per-program time and per-worker memory (``--program-timeout``, ``--memory-cap``)
    limits: PoolLimits
    budget: Budget
    #: torch threads of each cache-pair side
    side_threads: int


def launch(ray_address: str | None, jobs: int, devices: str | None) -> Launch:
    """Ray when asked for: its actors are the workers, so it takes neither ``--jobs 0``
    (no workers at all) nor ``--devices`` (the cluster's GPUs are its own).  Else
    ``--jobs 0`` runs in this process, unless ``--devices`` asks for workers."""
    if ray_address is not None and jobs == 0:
        raise PlanError("--ray runs its workers as actors; --jobs 0 (in-process) does not go with it")
    if ray_address is not None and devices is not None:
        raise PlanError("--ray takes its GPUs from the cluster (one actor each); drop --devices")
    if ray_address is not None:
        return Launch.RAY
    return Launch.IN_PROCESS if jobs == 0 and devices is None else Launch.POOL


def gpus(devices: str | None) -> list[str] | None:
    """The GPU indices of ``--devices`` ("0,1"): one worker each, so an empty list or
    anything but indices is refused rather than run on no GPU."""
    if devices is None:
        return None
    listed = [d.strip() for d in devices.split(",") if d.strip()]
    if not listed or not all(d.isdigit() for d in listed):
        raise PlanError(f"{devices!r} is not a list of GPU indices like 0,1", option="--devices")
    return listed


def pool_device(device: str | None, listed: list[str] | None) -> str | None:
    """Workers on listed GPUs run on CUDA unless ``--device`` says otherwise: a GPU
    list with the CPU's default device would leave the GPUs idle."""
    return (device or "cuda") if listed is not None else device


def ray_device(device: str | None, cluster_gpus: int) -> str:
    """The actors' device, not this machine's: CUDA when the cluster has GPUs (and no
    ``--device``), else the CPU.  Only its form is checked here (this machine may have
    no GPU), and a GPU device on a cluster without one is refused."""
    if device is None:
        return "cuda" if cluster_gpus else "cpu"
    if device not in ("cpu", "cuda") and not device.startswith("cuda:"):
        raise PlanError(f"{device!r} is not cpu, cuda or cuda:N", option="--device")
    if device != "cpu" and not cluster_gpus:
        raise PlanError(f"{device}: the Ray cluster has no GPU", option="--device")
    return device


def check_resume(resume: bool, state_dir: str | None) -> None:
    """A resume needs the folder it carries on from: a run without ``--state`` starts
    in a folder of its own, so there is nothing to carry on from."""
    if resume and state_dir is None:
        raise PlanError("--resume needs --state DIR, the campaign folder to carry on from "
                        "(a run without --state starts in a new folder)")


def check_cache_pairs(cache_pairs: bool, op_specs, targets: tuple[str, ...] = DEFAULT_TARGETS) -> None:
    """Cache pairs vary the declarations of dcefuzz's own ops, so they take no user ops;
    they pair two ``torch.compile``s, so they take no other target."""
    if cache_pairs and op_specs:
        raise PlanError("--cache-pairs vary dcefuzz's own ops' declarations; they do not take --ops")
    if cache_pairs and targets != DEFAULT_TARGETS:
        raise PlanError("--cache-pairs pair two torch.compile caches; they do not take "
                        f"--target {targets_text(targets)}")


def budget(seconds: float | None, programs: int | None) -> Budget:
    """A campaign given neither a duration nor a number of programs runs for
    :data:`DEFAULT_SECONDS`: never unbounded by accident."""
    if seconds is None and programs is None:
        seconds = DEFAULT_SECONDS
    return Budget(seconds=seconds, programs=programs)


def program_seconds(given: float | None, cache_pairs: bool) -> float:
    """The time limit per program: a cache pair's, which compiles in two fresh
    processes, is longer than a single program's."""
    if given is not None:
        return given
    return CACHE.program_seconds if cache_pairs else PoolLimits().program_seconds


def workers(jobs: int, listed: list[str] | None) -> int:
    """One worker per listed GPU (``--devices`` overrides ``--jobs``), else ``--jobs``;
    an in-process campaign (``--jobs 0``) is one worker too."""
    return len(listed) if listed is not None else max(1, jobs)


def side_threads(n_workers: int) -> int:
    """Torch threads of each cache-pair side: the machine's cores shared among the
    workers, so that the workers' sides do not fight over them (at least one)."""
    return max(1, (os.cpu_count() or 1) // n_workers)


def plan(how: Launch, jobs: int, listed: list[str] | None, seconds: float | None, programs: int | None,
         program_timeout: float | None, memory_cap: int, cache_pairs: bool) -> Plan:
    """The plan of a campaign from its options, each decided by the functions above."""
    n = workers(jobs, listed)
    return Plan(launch=how, jobs=jobs, gpus=listed, workers=n,
                limits=PoolLimits(program_seconds=program_seconds(program_timeout, cache_pairs),
                                  memory_mb=memory_cap),
                budget=budget(seconds, programs), side_threads=side_threads(n))


def start(plan: Plan, config: Config, shard, folder, resume: bool, log=None, progress=None):
    """Run the campaign as ``plan`` says; its ``Stats``.  A bad folder raises
    ``BadState``, workers that cannot start ``WorkerStartError``."""
    from fuzzer.campaign.pool import run_pool
    from fuzzer.campaign.session import Session, run_campaign

    session = Session(config, plan.budget, shard, folder, resume, log, progress)
    if plan.launch is Launch.RAY:
        from fuzzer.campaign import ray_pool

        return run_pool(session, plan.limits, launcher=ray_pool.Actors(config, plan.limits, jobs=max(1, plan.jobs)))
    if plan.launch is Launch.IN_PROCESS:
        return run_campaign(session)
    return run_pool(session, plan.limits, jobs=plan.jobs, devices=plan.gpus)
