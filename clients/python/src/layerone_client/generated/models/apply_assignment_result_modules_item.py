from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.apply_assignment_result_modules_item_module import (
    ApplyAssignmentResultModulesItemModule,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="ApplyAssignmentResultModulesItem")


@_attrs_define
class ApplyAssignmentResultModulesItem:
    """One assigned module and whether it can run on this node.

    Attributes:
        module (ApplyAssignmentResultModulesItemModule): The module a family belongs to. A node's assignment (the
            fleet's, applied by
            `apply_assignment`) decides which modules it runs; a node outside any fleet runs them all.
        ready (bool): Whether what the module needs is on this node; its operations fail
            `module_unavailable` while it is not.
        reason (None | str | Unset): What is missing, in words; `null` when ready.
    """

    module: ApplyAssignmentResultModulesItemModule
    ready: bool
    reason: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        module = self.module.value

        ready = self.ready

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "module": module,
                "ready": ready,
            }
        )
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        module = ApplyAssignmentResultModulesItemModule(d.pop("module"))

        ready = d.pop("ready")

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))

        apply_assignment_result_modules_item = cls(
            module=module,
            ready=ready,
            reason=reason,
        )

        return apply_assignment_result_modules_item
