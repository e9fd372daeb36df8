from enum import StrEnum


class EventPageEventsItemKind(StrEnum):
    DRIFT = "drift"
    DRIFT_RESOLVED = "drift_resolved"
    JOB = "job"

    def __str__(self) -> str:
        return str(self.value)
