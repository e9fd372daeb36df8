from enum import StrEnum


class ObserveRuntimeResultServicesItemService(StrEnum):
    APACHE = "apache"
    DOVECOT = "dovecot"
    MARIADB = "mariadb"
    PHP_FPM = "php_fpm"
    POSTFIX = "postfix"

    def __str__(self) -> str:
        return str(self.value)
