//! php_fpm: not configured yet.
