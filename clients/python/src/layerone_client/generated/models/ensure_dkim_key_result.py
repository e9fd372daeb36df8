from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.ensure_dkim_key_result_state import EnsureDkimKeyResultState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.ensure_dkim_key_result_dkim_type_0 import EnsureDkimKeyResultDkimType0
    from ..models.ensure_dkim_key_result_dmarc_type_0 import (
        EnsureDkimKeyResultDmarcType0,
    )
    from ..models.ensure_dkim_key_result_spf_type_0 import EnsureDkimKeyResultSpfType0


T = TypeVar("T", bound="EnsureDkimKeyResult")


@_attrs_define
class EnsureDkimKeyResult:
    """
    Attributes:
        state (EnsureDkimKeyResultState): Whether a resource exists after an operation: what the OS shows, not what was
            asked.
        dkim (EnsureDkimKeyResultDkimType0 | None | Unset): The DKIM public key record the control plane must publish.
        dmarc (EnsureDkimKeyResultDmarcType0 | None | Unset): The DMARC record the node recommends for the domain.
        spf (EnsureDkimKeyResultSpfType0 | None | Unset): The SPF record the node recommends for the domain.
    """

    state: EnsureDkimKeyResultState
    dkim: EnsureDkimKeyResultDkimType0 | None | Unset = UNSET
    dmarc: EnsureDkimKeyResultDmarcType0 | None | Unset = UNSET
    spf: EnsureDkimKeyResultSpfType0 | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.ensure_dkim_key_result_dkim_type_0 import (
            EnsureDkimKeyResultDkimType0,
        )
        from ..models.ensure_dkim_key_result_dmarc_type_0 import (
            EnsureDkimKeyResultDmarcType0,
        )
        from ..models.ensure_dkim_key_result_spf_type_0 import (
            EnsureDkimKeyResultSpfType0,
        )

        state = self.state.value

        dkim: dict[str, Any] | None | Unset
        if isinstance(self.dkim, Unset):
            dkim = UNSET
        elif isinstance(self.dkim, EnsureDkimKeyResultDkimType0):
            dkim = self.dkim.to_dict()
        else:
            dkim = self.dkim

        dmarc: dict[str, Any] | None | Unset
        if isinstance(self.dmarc, Unset):
            dmarc = UNSET
        elif isinstance(self.dmarc, EnsureDkimKeyResultDmarcType0):
            dmarc = self.dmarc.to_dict()
        else:
            dmarc = self.dmarc

        spf: dict[str, Any] | None | Unset
        if isinstance(self.spf, Unset):
            spf = UNSET
        elif isinstance(self.spf, EnsureDkimKeyResultSpfType0):
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
        from ..models.ensure_dkim_key_result_dkim_type_0 import (
            EnsureDkimKeyResultDkimType0,
        )
        from ..models.ensure_dkim_key_result_dmarc_type_0 import (
            EnsureDkimKeyResultDmarcType0,
        )
        from ..models.ensure_dkim_key_result_spf_type_0 import (
            EnsureDkimKeyResultSpfType0,
        )

        d = dict(src_dict)
        state = EnsureDkimKeyResultState(d.pop("state"))

        def _parse_dkim(data: object) -> EnsureDkimKeyResultDkimType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                dkim_type_0 = EnsureDkimKeyResultDkimType0.from_dict(data)

                return dkim_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EnsureDkimKeyResultDkimType0 | None | Unset, data)

        dkim = _parse_dkim(d.pop("dkim", UNSET))

        def _parse_dmarc(data: object) -> EnsureDkimKeyResultDmarcType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                dmarc_type_0 = EnsureDkimKeyResultDmarcType0.from_dict(data)

                return dmarc_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EnsureDkimKeyResultDmarcType0 | None | Unset, data)

        dmarc = _parse_dmarc(d.pop("dmarc", UNSET))

        def _parse_spf(data: object) -> EnsureDkimKeyResultSpfType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                spf_type_0 = EnsureDkimKeyResultSpfType0.from_dict(data)

                return spf_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EnsureDkimKeyResultSpfType0 | None | Unset, data)

        spf = _parse_spf(d.pop("spf", UNSET))

        ensure_dkim_key_result = cls(
            state=state,
            dkim=dkim,
            dmarc=dmarc,
            spf=spf,
        )

        return ensure_dkim_key_result
