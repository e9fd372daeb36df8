from enum import StrEnum


class SetSudoAllowlistResultState(StrEnum):
    ABSENT = "absent"
    PRESENT = "present"

    def __str__(self) -> str:
        return str(self.value)
