from enum import StrEnum


class EnsureMysqlDatabaseRequestCharset(StrEnum):
    ASCII = "ascii"
    LATIN1 = "latin1"
    UTF8MB3 = "utf8mb3"
    UTF8MB4 = "utf8mb4"

    def __str__(self) -> str:
        return str(self.value)
