from enum import StrEnum


class EnsureAccountRequestShell(StrEnum):
    BASH = "bash"
    NOLOGIN = "nologin"
    SH = "sh"

    def __str__(self) -> str:
        return str(self.value)
