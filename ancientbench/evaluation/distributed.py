"""Data-parallel evaluation over several processes, launched with ``torchrun`` or ``accelerate launch``.

``ancientbench eval`` (and :func:`ancientbench.evaluate_model`) notice a multi-process launch from the
``WORLD_SIZE`` variable the launchers set, and then:

- each process loads the model onto its own device (``cuda:<local rank>``, ``npu:<local rank>``; all on the
  CPU when there is no accelerator or ``--device cpu``) and scores a contiguous shard of every task's
  remaining items (``accelerate``'s ``split_between_processes``);
- each process appends its finished batches to its own file (``predictions_<k>shot.jsonl`` for the main
  process, ``predictions_<k>shot.part<rank>.jsonl`` for the others), so a killed run loses nothing and
  resumes with any number of processes (part files are merged on load and removed once the merged file is
  written);
- the records are gathered on every process (``gather_object``) and the main process writes the predictions
  and results - the same files a single-process run writes, with the same predictions (float32).

On a machine without CUDA/NPU, accelerate only forms a CPU process group (gloo) when asked with
``cpu=True``; without it each process believes it is rank 0 of 1 and scores everything. This module asks
for it whenever no accelerator is used, so ``torchrun --nproc_per_node 2 -m ancientbench.cli eval ...``
works on CPU (useful for tests; two processes on two cores are not faster than one).

``--device-map auto`` (one model spread over several devices) is model parallelism for a single process;
combining it with several processes is refused.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from ..errors import AncientBenchError
from ..models import npu_available


class DistributedError(AncientBenchError, ValueError):
    """Options that cannot be combined with a multi-process launch."""


def launched_processes() -> int:
    """How many processes the launcher started (``WORLD_SIZE``; 1 when not launched by torchrun/accelerate)."""
    try:
        return max(1, int(os.environ.get("WORLD_SIZE", "1")))
    except ValueError:
        return 1


class SingleProcess:
    """The trivial process group: this process does everything."""

    num_processes = 1
    process_index = 0
    is_main_process = True
    device = None

    def shard(self, items: Sequence) -> list:
        return list(items)

    def gather(self, objects: list) -> list:
        return list(objects)

    def broadcast(self, obj: Any) -> Any:
        return obj

    def barrier(self) -> None:
        pass

    def close(self) -> None:
        pass


class Processes(SingleProcess):
    """Several processes (accelerate's ``PartialState`` over torch.distributed)."""

    def __init__(self, state):
        self.state = state
        self.num_processes = state.num_processes
        self.process_index = state.process_index
        self.is_main_process = state.is_main_process
        self.device = state.device

    def shard(self, items: Sequence) -> list:
        with self.state.split_between_processes(list(items)) as mine:
            return list(mine)

    def gather(self, objects: list) -> list:
        """Every process's ``objects`` concatenated in process order, on every process."""
        from accelerate.utils import gather_object  # lazy: only a multi-process run needs it

        return gather_object(list(objects))

    def broadcast(self, obj: Any) -> Any:
        """The main process's ``obj`` on every process."""
        from accelerate.utils import broadcast_object_list  # lazy: only a multi-process run needs it

        box = [obj if self.is_main_process else None]
        broadcast_object_list(box, from_process=0)
        return box[0]

    def barrier(self) -> None:
        self.state.wait_for_everyone()

    def close(self) -> None:
        self.state.destroy_process_group()


_current: SingleProcess | None = None


def init(device: str | None = None, device_map: str | None = None) -> SingleProcess:
    """The process group of this run: :class:`SingleProcess` unless launched with several processes."""
    global _current
    n = launched_processes()
    if n <= 1:
        return SingleProcess()
    if _current is not None:
        return _current
    if device_map is not None:
        raise DistributedError(
            f"--device-map {device_map} spreads one model over all devices of one process; it cannot be combined "
            f"with {n} processes (data parallelism) - use one or the other"
        )
    from accelerate import PartialState  # lazy: only a multi-process run needs it


    kind = (device or "auto").split(":")[0]
    if kind == "auto":
        import torch  # lazy: torch costs seconds to import; only a model run needs it

        cpu = not (torch.cuda.is_available() or npu_available())
    else:
        cpu = kind == "cpu"
    if kind not in ("auto", "cpu", "cuda", "npu"):
        raise DistributedError(f"device {device!r} cannot be used with several processes; use cuda, npu or cpu")
    # cpu=True is what makes accelerate form a gloo group of CPU processes (TECH-NOTES §6)
    _current = Processes(PartialState(cpu=cpu))
    return _current


def process_device(processes: SingleProcess, device: str | None) -> str | None:
    """The device this process loads the model onto: its own accelerator under several processes."""
    if processes.num_processes == 1 or processes.device is None:
        return device
    return str(processes.device)


def close() -> None:
    """End the process group (at the end of a multi-process CLI run)."""
    global _current
    if _current is not None:
        _current.close()
        _current = None
