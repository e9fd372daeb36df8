from __future__ import annotations

from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.restore_account_backup_request import RestoreAccountBackupRequest


T = TypeVar("T", bound="RestoreAccountBackupEnvelope")


@_attrs_define
class RestoreAccountBackupEnvelope:
    """
    Attributes:
        operation (Literal['restore_account_backup']):
        request_id (str):
        resource (RestoreAccountBackupRequest):
    """

    operation: Literal["restore_account_backup"]
    request_id: str
    resource: RestoreAccountBackupRequest

    def to_dict(self) -> dict[str, Any]:
        operation = self.operation

        request_id = self.request_id

        resource = self.resource.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "operation": operation,
                "request_id": request_id,
                "resource": resource,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.restore_account_backup_request import RestoreAccountBackupRequest

        d = dict(src_dict)
        operation = cast(Literal["restore_account_backup"], d.pop("operation"))
        if operation != "restore_account_backup":
            raise ValueError(
                f"operation must match const 'restore_account_backup', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RestoreAccountBackupRequest.from_dict(d.pop("resource"))

        restore_account_backup_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return restore_account_backup_envelope
