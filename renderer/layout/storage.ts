/** localStorage, where the page may use it: a preference that cannot be remembered still applies for this session. */
export const preferences: Pick<Storage, 'getItem' | 'setItem'> = {
  getItem: (key) => {
    try {
      return localStorage.getItem(key);
    } catch {
      return null;
    }
  },
  setItem: (key, value) => {
    try {
      localStorage.setItem(key, value);
    } catch {
      // private mode or storage full: keep going without remembering
    }
  },
};
