from enum import StrEnum


class SetMysqlUserPasswordResultState(StrEnum):
    ABSENT = "absent"
    PRESENT = "present"

    def __str__(self) -> str:
        return str(self.value)
