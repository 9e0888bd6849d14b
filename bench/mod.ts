/** Public API of bench/ (filled in by its issue). */
export {};
