from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.observe_runtime_result_disks_item import ObserveRuntimeResultDisksItem
    from ..models.observe_runtime_result_load import ObserveRuntimeResultLoad
    from ..models.observe_runtime_result_memory import ObserveRuntimeResultMemory
    from ..models.observe_runtime_result_services_item import (
        ObserveRuntimeResultServicesItem,
    )
    from ..models.observe_runtime_result_tenant_php_item import (
        ObserveRuntimeResultTenantPhpItem,
    )


T = TypeVar("T", bound="ObserveRuntimeResult")


@_attrs_define
class ObserveRuntimeResult:
    """
    Attributes:
        disks (list[ObserveRuntimeResultDisksItem]): The file systems of the paths that exist on this node.
        load (ObserveRuntimeResultLoad):
        memory (ObserveRuntimeResultMemory):
        platform (str): `debian` or `cloudlinux`.
        services (list[ObserveRuntimeResultServicesItem]):
        tenant_php (list[ObserveRuntimeResultTenantPhpItem]): Each tenant's own PHP-FPM master (`debian`): one per
            account and PHP version its web
            domains use, with its unit's state, so a tenant whose pool FPM refuses is seen at
            once. Empty on `cloudlinux`, whose pools are sections of the shared masters listed in
            `services`.
    """

    disks: list[ObserveRuntimeResultDisksItem]
    load: ObserveRuntimeResultLoad
    memory: ObserveRuntimeResultMemory
    platform: str
    services: list[ObserveRuntimeResultServicesItem]
    tenant_php: list[ObserveRuntimeResultTenantPhpItem]

    def to_dict(self) -> dict[str, Any]:
        disks = []
        for disks_item_data in self.disks:
            disks_item = disks_item_data.to_dict()
            disks.append(disks_item)

        load = self.load.to_dict()

        memory = self.memory.to_dict()

        platform = self.platform

        services = []
        for services_item_data in self.services:
            services_item = services_item_data.to_dict()
            services.append(services_item)

        tenant_php = []
        for tenant_php_item_data in self.tenant_php:
            tenant_php_item = tenant_php_item_data.to_dict()
            tenant_php.append(tenant_php_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "disks": disks,
                "load": load,
                "memory": memory,
                "platform": platform,
                "services": services,
                "tenant_php": tenant_php,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.observe_runtime_result_disks_item import (
            ObserveRuntimeResultDisksItem,
        )
        from ..models.observe_runtime_result_load import ObserveRuntimeResultLoad
        from ..models.observe_runtime_result_memory import ObserveRuntimeResultMemory
        from ..models.observe_runtime_result_services_item import (
            ObserveRuntimeResultServicesItem,
        )
        from ..models.observe_runtime_result_tenant_php_item import (
            ObserveRuntimeResultTenantPhpItem,
        )

        d = dict(src_dict)
        disks = []
        _disks = d.pop("disks")
        for disks_item_data in _disks:
            disks_item = ObserveRuntimeResultDisksItem.from_dict(disks_item_data)

            disks.append(disks_item)

        load = ObserveRuntimeResultLoad.from_dict(d.pop("load"))

        memory = ObserveRuntimeResultMemory.from_dict(d.pop("memory"))

        platform = d.pop("platform")

        services = []
        _services = d.pop("services")
        for services_item_data in _services:
            services_item = ObserveRuntimeResultServicesItem.from_dict(
                services_item_data
            )

            services.append(services_item)

        tenant_php = []
        _tenant_php = d.pop("tenant_php")
        for tenant_php_item_data in _tenant_php:
            tenant_php_item = ObserveRuntimeResultTenantPhpItem.from_dict(
                tenant_php_item_data
            )

            tenant_php.append(tenant_php_item)

        observe_runtime_result = cls(
            disks=disks,
            load=load,
            memory=memory,
            platform=platform,
            services=services,
            tenant_php=tenant_php,
        )

        return observe_runtime_result
