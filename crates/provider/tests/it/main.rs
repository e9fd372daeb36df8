//! Integration tests of the provider: one binary (one link for all of them), real files in temporary
//! sysroots, real programs where the machine has them (shadow-utils with `--prefix`,
//! `apache2ctl -t`).

mod apache;
mod cloudlinux;
mod common;
mod identities;
mod mail;
mod mariadb;
mod php_cron;
mod pure_pw;
mod quota;
mod real_shadow_utils;
mod sim_accounts;
mod tenant_fs;
mod visudo;
