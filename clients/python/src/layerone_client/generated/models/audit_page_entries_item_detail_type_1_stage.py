from enum import StrEnum


class AuditPageEntriesItemDetailType1Stage(StrEnum):
    ADMITTED = "admitted"
    REJECTED = "rejected"

    def __str__(self) -> str:
        return str(self.value)
