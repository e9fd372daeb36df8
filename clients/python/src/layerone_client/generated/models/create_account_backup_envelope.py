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
    from ..models.create_account_backup_request import CreateAccountBackupRequest


T = TypeVar("T", bound="CreateAccountBackupEnvelope")


@_attrs_define
class CreateAccountBackupEnvelope:
    """
    Attributes:
        operation (Literal['create_account_backup']):
        request_id (str):
        resource (CreateAccountBackupRequest):
    """

    operation: Literal["create_account_backup"]
    request_id: str
    resource: CreateAccountBackupRequest

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
        from ..models.create_account_backup_request import CreateAccountBackupRequest

        d = dict(src_dict)
        operation = cast(Literal["create_account_backup"], d.pop("operation"))
        if operation != "create_account_backup":
            raise ValueError(
                f"operation must match const 'create_account_backup', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = CreateAccountBackupRequest.from_dict(d.pop("resource"))

        create_account_backup_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return create_account_backup_envelope
