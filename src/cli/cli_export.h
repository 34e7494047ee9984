/* `nwbzarr export` and `nwbzarr verify`: clients of include/nwbzarr/export.h.
 * Each takes the arguments after the program name (argv[0] = the command)
 * and returns the process exit status: 0 ok, 1 failure (or differences
 * found, for verify), 2 usage error. Errors go to stderr. */
#ifndef NZ_CLI_EXPORT_H
#define NZ_CLI_EXPORT_H

int nz_cli_export(int argc, char **argv);
int nz_cli_verify(int argc, char **argv);
/** `nwbzarr upgrade` (cmd_upgrade.c): a client of include/nwbzarr/upgrade.h. */
int nz_cli_upgrade(int argc, char **argv);

#endif
