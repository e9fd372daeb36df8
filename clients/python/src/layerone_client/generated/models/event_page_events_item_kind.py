from enum import StrEnum


class EventPageEventsItemKind(StrEnum):
    DISK_FULL = "disk_full"
    DISK_OK = "disk_ok"
    DRIFT = "drift"
    DRIFT_RESOLVED = "drift_resolved"
    JOB = "job"

    def __str__(self) -> str:
        return str(self.value)
