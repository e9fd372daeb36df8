from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.ensure_mysql_database_request_charset import (
    EnsureMysqlDatabaseRequestCharset,
)
from ..models.ensure_mysql_database_request_collation_type_1 import (
    EnsureMysqlDatabaseRequestCollationType1,
)
from ..models.ensure_mysql_database_request_collation_type_2_type_1 import (
    EnsureMysqlDatabaseRequestCollationType2Type1,
)
from ..models.ensure_mysql_database_request_collation_type_3_type_1 import (
    EnsureMysqlDatabaseRequestCollationType3Type1,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureMysqlDatabaseRequest")


@_attrs_define
class EnsureMysqlDatabaseRequest:
    """
    Attributes:
        account (str):
        id (str):
        name (str): The account's part of the name; the database is `<username>_<name>`.
        charset (EnsureMysqlDatabaseRequestCharset | Unset): A MariaDB character set offered for new databases. Default:
            EnsureMysqlDatabaseRequestCharset.UTF8MB4.
        collation (EnsureMysqlDatabaseRequestCollationType1 | EnsureMysqlDatabaseRequestCollationType2Type1 |
            EnsureMysqlDatabaseRequestCollationType3Type1 | None | Unset): Must belong to `charset`; the charset's default
            when absent.
    """

    account: str
    id: str
    name: str
    charset: EnsureMysqlDatabaseRequestCharset | Unset = (
        EnsureMysqlDatabaseRequestCharset.UTF8MB4
    )
    collation: (
        EnsureMysqlDatabaseRequestCollationType1
        | EnsureMysqlDatabaseRequestCollationType2Type1
        | EnsureMysqlDatabaseRequestCollationType3Type1
        | None
        | Unset
    ) = UNSET

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        id = self.id

        name = self.name

        charset: str | Unset = UNSET
        if not isinstance(self.charset, Unset):
            charset = self.charset.value

        collation: None | str | Unset
        if isinstance(self.collation, Unset):
            collation = UNSET
        elif (
            isinstance(self.collation, EnsureMysqlDatabaseRequestCollationType1)
            or isinstance(self.collation, EnsureMysqlDatabaseRequestCollationType2Type1)
            or isinstance(self.collation, EnsureMysqlDatabaseRequestCollationType3Type1)
        ):
            collation = self.collation.value
        else:
            collation = self.collation

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "id": id,
                "name": name,
            }
        )
        if charset is not UNSET:
            field_dict["charset"] = charset
        if collation is not UNSET:
            field_dict["collation"] = collation

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        id = d.pop("id")

        name = d.pop("name")

        _charset = d.pop("charset", UNSET)
        charset: EnsureMysqlDatabaseRequestCharset | Unset
        if isinstance(_charset, Unset):
            charset = UNSET
        else:
            charset = EnsureMysqlDatabaseRequestCharset(_charset)

        def _parse_collation(
            data: object,
        ) -> (
            EnsureMysqlDatabaseRequestCollationType1
            | EnsureMysqlDatabaseRequestCollationType2Type1
            | EnsureMysqlDatabaseRequestCollationType3Type1
            | None
            | Unset
        ):
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                collation_type_1 = EnsureMysqlDatabaseRequestCollationType1(data)

                return collation_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                collation_type_2_type_1 = EnsureMysqlDatabaseRequestCollationType2Type1(
                    data
                )

                return collation_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                collation_type_3_type_1 = EnsureMysqlDatabaseRequestCollationType3Type1(
                    data
                )

                return collation_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                EnsureMysqlDatabaseRequestCollationType1
                | EnsureMysqlDatabaseRequestCollationType2Type1
                | EnsureMysqlDatabaseRequestCollationType3Type1
                | None
                | Unset,
                data,
            )

        collation = _parse_collation(d.pop("collation", UNSET))

        ensure_mysql_database_request = cls(
            account=account,
            id=id,
            name=name,
            charset=charset,
            collation=collation,
        )

        return ensure_mysql_database_request
