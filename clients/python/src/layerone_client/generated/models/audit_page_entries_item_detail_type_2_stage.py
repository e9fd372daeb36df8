from enum import StrEnum


class AuditPageEntriesItemDetailType2Stage(StrEnum):
    ADMITTED = "admitted"
    FAILED = "failed"
    REJECTED = "rejected"
    SUCCEEDED = "succeeded"

    def __str__(self) -> str:
        return str(self.value)
