"""EASY backfilling with the widest job first: a plugin built on schedlab's public API only."""

from schedlab import EasyBackfilling


class LargestFirst(EasyBackfilling):
    """EASY backfilling, the widest waiting job first (ties: submission order)."""

    option_help = {"queue_order": "the queue policy (default lqf: the largest request first)"}

    def __init__(self, *, queue_order: str = "lqf") -> None:
        super().__init__(queue_order=queue_order)
