import { useLayoutEffect, useRef, type ReactNode } from 'react';

/**
 * A modal dialog on the browser's own <dialog>: the rest of the page is inert while it is open, Escape
 * closes it, and focus goes back to what opened it.
 */
export function Modal({ label, onClose, children, testId }: { label: string; onClose: () => void; children: ReactNode; testId?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  useLayoutEffect(() => {
    const dialog = ref.current!;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    dialog.showModal();
    return () => {
      dialog.close();
      opener?.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-label={label}
      data-testid={testId}
      onCancel={(e) => {
        e.preventDefault(); // React owns whether the dialog is shown: close through it
        onClose();
      }}
      onClick={(e) => {
        if (e.target === e.currentTarget) onClose(); // a click on the backdrop
      }}
    >
      {children}
    </dialog>
  );
}
