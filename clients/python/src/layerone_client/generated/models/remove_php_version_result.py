from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.remove_php_version_result_state import RemovePhpVersionResultState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.remove_php_version_result_pools_item import (
        RemovePhpVersionResultPoolsItem,
    )


T = TypeVar("T", bound="RemovePhpVersionResult")


@_attrs_define
class RemovePhpVersionResult:
    """
    Attributes:
        extensions (list[str]): The modules that version loads, lowercased.
        pools (list[RemovePhpVersionResultPoolsItem]): Every pool the account has after the change.
        state (RemovePhpVersionResultState): Whether a resource exists after an operation: what the OS shows, not what
            was asked.
        version (None | str | Unset): The version now serving the domain, if any.
    """

    extensions: list[str]
    pools: list[RemovePhpVersionResultPoolsItem]
    state: RemovePhpVersionResultState
    version: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        extensions = self.extensions

        pools = []
        for pools_item_data in self.pools:
            pools_item = pools_item_data.to_dict()
            pools.append(pools_item)

        state = self.state.value

        version: None | str | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "extensions": extensions,
                "pools": pools,
                "state": state,
            }
        )
        if version is not UNSET:
            field_dict["version"] = version

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.remove_php_version_result_pools_item import (
            RemovePhpVersionResultPoolsItem,
        )

        d = dict(src_dict)
        extensions = cast(list[str], d.pop("extensions"))

        pools = []
        _pools = d.pop("pools")
        for pools_item_data in _pools:
            pools_item = RemovePhpVersionResultPoolsItem.from_dict(pools_item_data)

            pools.append(pools_item)

        state = RemovePhpVersionResultState(d.pop("state"))

        def _parse_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        remove_php_version_result = cls(
            extensions=extensions,
            pools=pools,
            state=state,
            version=version,
        )

        return remove_php_version_result
