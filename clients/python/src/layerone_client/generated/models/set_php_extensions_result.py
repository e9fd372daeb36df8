from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.set_php_extensions_result_state import SetPhpExtensionsResultState

if TYPE_CHECKING:
    from ..models.set_php_extensions_result_options import SetPhpExtensionsResultOptions
    from ..models.set_php_extensions_result_pools_item import (
        SetPhpExtensionsResultPoolsItem,
    )


T = TypeVar("T", bound="SetPhpExtensionsResult")


@_attrs_define
class SetPhpExtensionsResult:
    """
    Attributes:
        extensions (list[str]): The extensions the account asked for.
        options (SetPhpExtensionsResultOptions): The options as written into every pool of the account.
        pools (list[SetPhpExtensionsResultPoolsItem]): Every pool of the account, with the modules really loaded.
        state (SetPhpExtensionsResultState): Whether a resource exists after an operation: what the OS shows, not what
            was asked.
    """

    extensions: list[str]
    options: SetPhpExtensionsResultOptions
    pools: list[SetPhpExtensionsResultPoolsItem]
    state: SetPhpExtensionsResultState

    def to_dict(self) -> dict[str, Any]:
        extensions = self.extensions

        options = self.options.to_dict()

        pools = []
        for pools_item_data in self.pools:
            pools_item = pools_item_data.to_dict()
            pools.append(pools_item)

        state = self.state.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "extensions": extensions,
                "options": options,
                "pools": pools,
                "state": state,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.set_php_extensions_result_options import (
            SetPhpExtensionsResultOptions,
        )
        from ..models.set_php_extensions_result_pools_item import (
            SetPhpExtensionsResultPoolsItem,
        )

        d = dict(src_dict)
        extensions = cast(list[str], d.pop("extensions"))

        options = SetPhpExtensionsResultOptions.from_dict(d.pop("options"))

        pools = []
        _pools = d.pop("pools")
        for pools_item_data in _pools:
            pools_item = SetPhpExtensionsResultPoolsItem.from_dict(pools_item_data)

            pools.append(pools_item)

        state = SetPhpExtensionsResultState(d.pop("state"))

        set_php_extensions_result = cls(
            extensions=extensions,
            options=options,
            pools=pools,
            state=state,
        )

        return set_php_extensions_result
