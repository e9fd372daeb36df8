from enum import StrEnum


class SetAccountPasswordResultState(StrEnum):
    ABSENT = "absent"
    PRESENT = "present"

    def __str__(self) -> str:
        return str(self.value)
