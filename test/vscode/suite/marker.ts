/** Printed by the suite as it starts, so a runner can tell its output from the workbench's. */
export const SUITE_START_MARKER = '--- Repo Discuss extension-host suite ---';
