from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.apply_assignment_result_modules_item import (
        ApplyAssignmentResultModulesItem,
    )


T = TypeVar("T", bound="ApplyAssignmentResult")


@_attrs_define
class ApplyAssignmentResult:
    """The assignment as the node now applies it.

    Attributes:
        generation (int): The generation now in effect.
        modules (list[ApplyAssignmentResultModulesItem]): Every assigned module, `core` included, in the order of the
            module list.
        node (str):
    """

    generation: int
    modules: list[ApplyAssignmentResultModulesItem]
    node: str

    def to_dict(self) -> dict[str, Any]:
        generation = self.generation

        modules = []
        for modules_item_data in self.modules:
            modules_item = modules_item_data.to_dict()
            modules.append(modules_item)

        node = self.node

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "generation": generation,
                "modules": modules,
                "node": node,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.apply_assignment_result_modules_item import (
            ApplyAssignmentResultModulesItem,
        )

        d = dict(src_dict)
        generation = d.pop("generation")

        modules = []
        _modules = d.pop("modules")
        for modules_item_data in _modules:
            modules_item = ApplyAssignmentResultModulesItem.from_dict(modules_item_data)

            modules.append(modules_item)

        node = d.pop("node")

        apply_assignment_result = cls(
            generation=generation,
            modules=modules,
            node=node,
        )

        return apply_assignment_result
