from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RestoreAccountBackupResult")


@_attrs_define
class RestoreAccountBackupResult:
    """
    Attributes:
        blob (str): The archive restored.
        bytes_ (int): Bytes of file content written (holes excluded).
        databases (list[str]): The databases whose dumps were imported.
        dirs (int):
        files (int):
        statements (int): Statements run across those imports.
        symlinks (int):
        apparent_bytes (int | Unset): The files' sizes, holes included. Default: 0.
        sparse_files (int | Unset): Files restored with their holes as holes. Default: 0.
    """

    blob: str
    bytes_: int
    databases: list[str]
    dirs: int
    files: int
    statements: int
    symlinks: int
    apparent_bytes: int | Unset = 0
    sparse_files: int | Unset = 0

    def to_dict(self) -> dict[str, Any]:
        blob = self.blob

        bytes_ = self.bytes_

        databases = self.databases

        dirs = self.dirs

        files = self.files

        statements = self.statements

        symlinks = self.symlinks

        apparent_bytes = self.apparent_bytes

        sparse_files = self.sparse_files

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "blob": blob,
                "bytes": bytes_,
                "databases": databases,
                "dirs": dirs,
                "files": files,
                "statements": statements,
                "symlinks": symlinks,
            }
        )
        if apparent_bytes is not UNSET:
            field_dict["apparent_bytes"] = apparent_bytes
        if sparse_files is not UNSET:
            field_dict["sparse_files"] = sparse_files

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        blob = d.pop("blob")

        bytes_ = d.pop("bytes")

        databases = cast(list[str], d.pop("databases"))

        dirs = d.pop("dirs")

        files = d.pop("files")

        statements = d.pop("statements")

        symlinks = d.pop("symlinks")

        apparent_bytes = d.pop("apparent_bytes", UNSET)

        sparse_files = d.pop("sparse_files", UNSET)

        restore_account_backup_result = cls(
            blob=blob,
            bytes_=bytes_,
            databases=databases,
            dirs=dirs,
            files=files,
            statements=statements,
            symlinks=symlinks,
            apparent_bytes=apparent_bytes,
            sparse_files=sparse_files,
        )

        return restore_account_backup_result
