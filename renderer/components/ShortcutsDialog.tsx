import { SHORTCUTS, chordFor, formatChord } from '../../core/ui/shortcuts';
import { platform } from '../layout/keyboard';
import { Modal } from './Modal';

const GROUPS = [...new Set(SHORTCUTS.map((s) => s.group))];

/** Every shortcut the app has, from the same table the keyboard handler reads. */
export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  return (
    <Modal label="Keyboard shortcuts" onClose={onClose} testId="shortcuts-dialog">
      <h2>Keyboard shortcuts</h2>
      {GROUPS.map((group) => (
        <section key={group}>
          <h3>{group}</h3>
          <table className="shortcuts">
            <tbody>
              {SHORTCUTS.filter((s) => s.group === group).map((s) => (
                <tr key={s.id} data-testid={`shortcut-${s.id}`}>
                  <td>
                    <kbd>{formatChord(chordFor(s, platform), platform)}</kbd>
                  </td>
                  <td>{s.does}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ))}
      <h3>Anywhere</h3>
      <table className="shortcuts">
        <tbody>
          <tr>
            <td>
              <kbd>Tab</kbd> / <kbd>Shift+Tab</kbd>
            </td>
            <td>Next / previous control (in the editor too, unless Tab is set to insert a tab)</td>
          </tr>
          <tr>
            <td>
              <kbd>←</kbd> <kbd>→</kbd>
            </td>
            <td>Between tabs in a row of tabs (files, views, output); Delete closes a file tab</td>
          </tr>
          <tr>
            <td>
              <kbd>Esc</kbd>
            </td>
            <td>Close a dialog</td>
          </tr>
        </tbody>
      </table>
      <p>
        <button onClick={onClose} autoFocus>
          Close
        </button>
      </p>
    </Modal>
  );
}
