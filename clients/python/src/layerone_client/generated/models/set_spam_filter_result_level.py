from enum import StrEnum


class SetSpamFilterResultLevel(StrEnum):
    OFF = "off"
    STANDARD = "standard"
    STRICT = "strict"

    def __str__(self) -> str:
        return str(self.value)
