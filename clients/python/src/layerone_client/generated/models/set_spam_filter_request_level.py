from enum import StrEnum


class SetSpamFilterRequestLevel(StrEnum):
    OFF = "off"
    STANDARD = "standard"
    STRICT = "strict"

    def __str__(self) -> str:
        return str(self.value)
