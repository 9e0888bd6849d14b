/** Public API of datasets/ (filled in by its issue). */
export {};
