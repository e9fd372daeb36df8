from enum import StrEnum


class SetErrorPagesJobState(StrEnum):
    FAILED = "failed"
    QUEUED = "queued"
    RECEIVED = "received"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    SUPERSEDED = "superseded"

    def __str__(self) -> str:
        return str(self.value)
