from enum import StrEnum


class SuspendWebDomainResultState(StrEnum):
    ABSENT = "absent"
    PRESENT = "present"

    def __str__(self) -> str:
        return str(self.value)
