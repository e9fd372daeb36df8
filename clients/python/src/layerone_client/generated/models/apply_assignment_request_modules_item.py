from enum import StrEnum


class ApplyAssignmentRequestModulesItem(StrEnum):
    BACKUP = "backup"
    CORE = "core"
    MAIL = "mail"
    MYSQL = "mysql"
    PHP = "php"
    TLS = "tls"
    WEB = "web"

    def __str__(self) -> str:
        return str(self.value)
