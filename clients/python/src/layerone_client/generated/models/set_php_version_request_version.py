from enum import StrEnum


class SetPhpVersionRequestVersion(StrEnum):
    VALUE_0 = "7.4"
    VALUE_1 = "8.0"
    VALUE_2 = "8.1"
    VALUE_3 = "8.2"
    VALUE_4 = "8.3"
    VALUE_5 = "8.4"

    def __str__(self) -> str:
        return str(self.value)
