from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.remove_dkim_key_result_state import RemoveDkimKeyResultState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.remove_dkim_key_result_dkim_type_0 import RemoveDkimKeyResultDkimType0
    from ..models.remove_dkim_key_result_dmarc_type_0 import (
        RemoveDkimKeyResultDmarcType0,
    )
    from ..models.remove_dkim_key_result_spf_type_0 import RemoveDkimKeyResultSpfType0


T = TypeVar("T", bound="RemoveDkimKeyResult")


@_attrs_define
class RemoveDkimKeyResult:
    """
    Attributes:
        state (RemoveDkimKeyResultState): Whether a resource exists after an operation: what the OS shows, not what was
            asked.
        dkim (None | RemoveDkimKeyResultDkimType0 | Unset): The DKIM public key record the control plane must publish.
        dmarc (None | RemoveDkimKeyResultDmarcType0 | Unset): The DMARC record the node recommends for the domain.
        spf (None | RemoveDkimKeyResultSpfType0 | Unset): The SPF record the node recommends for the domain.
    """

    state: RemoveDkimKeyResultState
    dkim: None | RemoveDkimKeyResultDkimType0 | Unset = UNSET
    dmarc: None | RemoveDkimKeyResultDmarcType0 | Unset = UNSET
    spf: None | RemoveDkimKeyResultSpfType0 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.remove_dkim_key_result_dkim_type_0 import (
            RemoveDkimKeyResultDkimType0,
        )
        from ..models.remove_dkim_key_result_dmarc_type_0 import (
            RemoveDkimKeyResultDmarcType0,
        )
        from ..models.remove_dkim_key_result_spf_type_0 import (
            RemoveDkimKeyResultSpfType0,
        )

        state = self.state.value

        dkim: dict[str, Any] | None | Unset
        if isinstance(self.dkim, Unset):
            dkim = UNSET
        elif isinstance(self.dkim, RemoveDkimKeyResultDkimType0):
            dkim = self.dkim.to_dict()
        else:
            dkim = self.dkim

        dmarc: dict[str, Any] | None | Unset
        if isinstance(self.dmarc, Unset):
            dmarc = UNSET
        elif isinstance(self.dmarc, RemoveDkimKeyResultDmarcType0):
            dmarc = self.dmarc.to_dict()
        else:
            dmarc = self.dmarc

        spf: dict[str, Any] | None | Unset
        if isinstance(self.spf, Unset):
            spf = UNSET
        elif isinstance(self.spf, RemoveDkimKeyResultSpfType0):
            spf = self.spf.to_dict()
        else:
            spf = self.spf

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
            }
        )
        if dkim is not UNSET:
            field_dict["dkim"] = dkim
        if dmarc is not UNSET:
            field_dict["dmarc"] = dmarc
        if spf is not UNSET:
            field_dict["spf"] = spf

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.remove_dkim_key_result_dkim_type_0 import (
            RemoveDkimKeyResultDkimType0,
        )
        from ..models.remove_dkim_key_result_dmarc_type_0 import (
            RemoveDkimKeyResultDmarcType0,
        )
        from ..models.remove_dkim_key_result_spf_type_0 import (
            RemoveDkimKeyResultSpfType0,
        )

        d = dict(src_dict)
        state = RemoveDkimKeyResultState(d.pop("state"))

        def _parse_dkim(data: object) -> None | RemoveDkimKeyResultDkimType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                dkim_type_0 = RemoveDkimKeyResultDkimType0.from_dict(data)

                return dkim_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RemoveDkimKeyResultDkimType0 | Unset, data)

        dkim = _parse_dkim(d.pop("dkim", UNSET))

        def _parse_dmarc(data: object) -> None | RemoveDkimKeyResultDmarcType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                dmarc_type_0 = RemoveDkimKeyResultDmarcType0.from_dict(data)

                return dmarc_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RemoveDkimKeyResultDmarcType0 | Unset, data)

        dmarc = _parse_dmarc(d.pop("dmarc", UNSET))

        def _parse_spf(data: object) -> None | RemoveDkimKeyResultSpfType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                spf_type_0 = RemoveDkimKeyResultSpfType0.from_dict(data)

                return spf_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RemoveDkimKeyResultSpfType0 | Unset, data)

        spf = _parse_spf(d.pop("spf", UNSET))

        remove_dkim_key_result = cls(
            state=state,
            dkim=dkim,
            dmarc=dmarc,
            spf=spf,
        )

        return remove_dkim_key_result
