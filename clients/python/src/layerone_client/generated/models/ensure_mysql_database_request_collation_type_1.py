from enum import StrEnum


class EnsureMysqlDatabaseRequestCollationType1(StrEnum):
    ASCII_BIN = "ascii_bin"
    ASCII_GENERAL_CI = "ascii_general_ci"
    LATIN1_BIN = "latin1_bin"
    LATIN1_GENERAL_CI = "latin1_general_ci"
    LATIN1_SWEDISH_CI = "latin1_swedish_ci"
    UTF8MB3_GENERAL_CI = "utf8mb3_general_ci"
    UTF8MB3_UNICODE_CI = "utf8mb3_unicode_ci"
    UTF8MB4_BIN = "utf8mb4_bin"
    UTF8MB4_GENERAL_CI = "utf8mb4_general_ci"
    UTF8MB4_UNICODE_520_CI = "utf8mb4_unicode_520_ci"
    UTF8MB4_UNICODE_CI = "utf8mb4_unicode_ci"

    def __str__(self) -> str:
        return str(self.value)
