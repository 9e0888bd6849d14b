/** Public API of reports/ (filled in by its issue). */
export {};
