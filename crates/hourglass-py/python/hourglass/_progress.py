"""Progress reporting shared by the long calls: a callable, a tqdm bar, or nothing."""

from typing import Callable, Optional, Union

Progress = Union[None, bool, Callable[[int, int], object]]


def callback(progress: Progress, label: str) -> Optional[Callable[[int, int], object]]:
    """The function the native code calls with ``(done, total)``.

    ``progress`` is ``None``/``False`` (nothing), a callable taking ``(done, total)``, or
    ``True``: a tqdm bar (Jupyter-friendly through ``tqdm.auto``) when tqdm is installed,
    nothing otherwise.
    """
    if progress is None or progress is False:
        return None
    if progress is True:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return None
        bar = {}

        def update(done: int, total: int) -> None:
            if "bar" not in bar:
                bar["bar"] = tqdm(total=total, desc=label, unit="sq", unit_scale=True)
            b = bar["bar"]
            b.update(done - b.n)
            if done >= total:
                b.close()

        return update
    if callable(progress):
        return progress
    raise TypeError("progress must be None, a bool or a callable taking (done, total)")
