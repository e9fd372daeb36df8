from enum import StrEnum


class CreateAccountBackupResultState(StrEnum):
    ABSENT = "absent"
    PRESENT = "present"

    def __str__(self) -> str:
        return str(self.value)
