from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.apply_assignment_request_modules_item import (
    ApplyAssignmentRequestModulesItem,
)

T = TypeVar("T", bound="ApplyAssignmentRequest")


@_attrs_define
class ApplyAssignmentRequest:
    """Apply the fleet's assignment of modules to this node.

    Attributes:
        generation (int): Raised by the fleet on every change: a generation older than the one applied is
            refused (`stale_generation`), and so is the same generation with other modules.
        id (str): This node's id. A node has one assignment: once one is applied, every later request
            names the same id.
        modules (list[ApplyAssignmentRequestModulesItem]): The modules the node runs; `core` runs whether it is listed
            or not. The order and
            repetitions do not matter: the signature covers the names sorted and de-duplicated.
        node (str): The node's name in its fleet: the name pinned in its fleet identity, or the request is
            refused (`wrong_fleet_node`).
        signature (str): The fleet key's Ed25519 signature of the assignment (see [`signed_bytes`]), in
            base64url without padding.
    """

    generation: int
    id: str
    modules: list[ApplyAssignmentRequestModulesItem]
    node: str
    signature: str

    def to_dict(self) -> dict[str, Any]:
        generation = self.generation

        id = self.id

        modules = []
        for modules_item_data in self.modules:
            modules_item = modules_item_data.value
            modules.append(modules_item)

        node = self.node

        signature = self.signature

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "generation": generation,
                "id": id,
                "modules": modules,
                "node": node,
                "signature": signature,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        generation = d.pop("generation")

        id = d.pop("id")

        modules = []
        _modules = d.pop("modules")
        for modules_item_data in _modules:
            modules_item = ApplyAssignmentRequestModulesItem(modules_item_data)

            modules.append(modules_item)

        node = d.pop("node")

        signature = d.pop("signature")

        apply_assignment_request = cls(
            generation=generation,
            id=id,
            modules=modules,
            node=node,
            signature=signature,
        )

        return apply_assignment_request
