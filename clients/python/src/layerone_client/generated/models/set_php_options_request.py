from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.set_php_options_request_options import SetPhpOptionsRequestOptions


T = TypeVar("T", bound="SetPhpOptionsRequest")


@_attrs_define
class SetPhpOptionsRequest:
    """
    Attributes:
        id (str): The account's id: one set of settings per account.
        options (SetPhpOptionsRequestOptions): The settings, each bounded; an absent one is PHP's default.
    """

    id: str
    options: SetPhpOptionsRequestOptions

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        options = self.options.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "options": options,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.set_php_options_request_options import SetPhpOptionsRequestOptions

        d = dict(src_dict)
        id = d.pop("id")

        options = SetPhpOptionsRequestOptions.from_dict(d.pop("options"))

        set_php_options_request = cls(
            id=id,
            options=options,
        )

        return set_php_options_request
