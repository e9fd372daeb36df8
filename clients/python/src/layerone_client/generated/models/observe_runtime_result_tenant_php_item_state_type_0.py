from enum import StrEnum


class ObserveRuntimeResultTenantPhpItemStateType0(StrEnum):
    ACTIVATING = "activating"
    ACTIVE = "active"
    DEACTIVATING = "deactivating"
    FAILED = "failed"
    INACTIVE = "inactive"
    RELOADING = "reloading"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return str(self.value)
