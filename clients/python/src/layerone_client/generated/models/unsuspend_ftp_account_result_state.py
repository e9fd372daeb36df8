from enum import StrEnum


class UnsuspendFtpAccountResultState(StrEnum):
    ABSENT = "absent"
    PRESENT = "present"

    def __str__(self) -> str:
        return str(self.value)
