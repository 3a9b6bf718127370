"""The shrink passes, one small object each behind ``base.ShrinkPass``; their order is
``schedule.SCHEDULE``."""
