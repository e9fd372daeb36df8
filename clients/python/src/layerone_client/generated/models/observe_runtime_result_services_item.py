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

from ..models.observe_runtime_result_services_item_service import (
    ObserveRuntimeResultServicesItemService,
)
from ..models.observe_runtime_result_services_item_state_type_0 import (
    ObserveRuntimeResultServicesItemStateType0,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="ObserveRuntimeResultServicesItem")


@_attrs_define
class ObserveRuntimeResultServicesItem:
    """
    Attributes:
        installed (bool): Whether systemd knows the unit (its unit file is installed).
        service (ObserveRuntimeResultServicesItemService): Which shared service.
        state (Literal['not_found'] | ObserveRuntimeResultServicesItemStateType0): systemd's ActiveState, closed:
            anything systemd adds later is `unknown`.
        unit (str): The systemd unit asked about.
        php_version (None | str | Unset): `8.2` for PHP-FPM; `null` for the others.
        version (None | str | Unset): The installed package version (Debian); `null` where the node cannot read it.
    """

    installed: bool
    service: ObserveRuntimeResultServicesItemService
    state: Literal["not_found"] | ObserveRuntimeResultServicesItemStateType0
    unit: str
    php_version: None | str | Unset = UNSET
    version: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        installed = self.installed

        service = self.service.value

        state: Literal["not_found"] | str
        if isinstance(self.state, ObserveRuntimeResultServicesItemStateType0):
            state = self.state.value
        else:
            state = self.state

        unit = self.unit

        php_version: None | str | Unset
        if isinstance(self.php_version, Unset):
            php_version = UNSET
        else:
            php_version = self.php_version

        version: None | str | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "installed": installed,
                "service": service,
                "state": state,
                "unit": unit,
            }
        )
        if php_version is not UNSET:
            field_dict["php_version"] = php_version
        if version is not UNSET:
            field_dict["version"] = version

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        installed = d.pop("installed")

        service = ObserveRuntimeResultServicesItemService(d.pop("service"))

        def _parse_state(
            data: object,
        ) -> Literal["not_found"] | ObserveRuntimeResultServicesItemStateType0:
            try:
                if not isinstance(data, str):
                    raise TypeError()
                state_type_0 = ObserveRuntimeResultServicesItemStateType0(data)

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

        def _parse_php_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        php_version = _parse_php_version(d.pop("php_version", UNSET))

        def _parse_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        observe_runtime_result_services_item = cls(
            installed=installed,
            service=service,
            state=state,
            unit=unit,
            php_version=php_version,
            version=version,
        )

        return observe_runtime_result_services_item
