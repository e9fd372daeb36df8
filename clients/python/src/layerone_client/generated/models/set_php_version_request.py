from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.set_php_version_request_version import SetPhpVersionRequestVersion

T = TypeVar("T", bound="SetPhpVersionRequest")


@_attrs_define
class SetPhpVersionRequest:
    """
    Attributes:
        account (str):
        id (str): The web domain's id.
        version (SetPhpVersionRequestVersion): A PHP version the node knows of. Whether this node has it is observed at
            execution
            (`observe_php_versions`), never assumed.
    """

    account: str
    id: str
    version: SetPhpVersionRequestVersion

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        version = self.version.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        version = SetPhpVersionRequestVersion(d.pop("version"))

        set_php_version_request = cls(
            account=account,
            id=id,
            version=version,
        )

        return set_php_version_request
