from enum import StrEnum


class RemoveCertificateResultState(StrEnum):
    ABSENT = "absent"
    PRESENT = "present"

    def __str__(self) -> str:
        return str(self.value)
