from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

from ..models.observe_runtime_result_tenant_php_item_state_type_0 import (
    ObserveRuntimeResultTenantPhpItemStateType0,
)

T = TypeVar("T", bound="ObserveRuntimeResultTenantPhpItem")


@_attrs_define
class ObserveRuntimeResultTenantPhpItem:
    """One tenant's own PHP-FPM master.

    Attributes:
        account (str): The account's id.
        php_version (str): `8.2`.
        state (Literal['not_found'] | ObserveRuntimeResultTenantPhpItemStateType0): systemd's ActiveState, closed:
            anything systemd adds later is `unknown`.
        unit (str): Its systemd unit: `php8.2-fpm@<uid>.service`, in the account's slice.
    """

    account: str
    php_version: str
    state: Literal["not_found"] | ObserveRuntimeResultTenantPhpItemStateType0
    unit: str

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        php_version = self.php_version

        state: Literal["not_found"] | str
        if isinstance(self.state, ObserveRuntimeResultTenantPhpItemStateType0):
            state = self.state.value
        else:
            state = self.state

        unit = self.unit

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "php_version": php_version,
                "state": state,
                "unit": unit,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        php_version = d.pop("php_version")

        def _parse_state(
            data: object,
        ) -> Literal["not_found"] | ObserveRuntimeResultTenantPhpItemStateType0:
            try:
                if not isinstance(data, str):
                    raise TypeError()
                state_type_0 = ObserveRuntimeResultTenantPhpItemStateType0(data)

                return state_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            state_type_1 = cast(Literal["not_found"], data)
            if state_type_1 != "not_found":
                raise ValueError(
                    f"state_type_1 must match const 'not_found', got '{state_type_1}'"
                )
            return state_type_1

        state = _parse_state(d.pop("state"))

        unit = d.pop("unit")

        observe_runtime_result_tenant_php_item = cls(
            account=account,
            php_version=php_version,
            state=state,
            unit=unit,
        )

        return observe_runtime_result_tenant_php_item
