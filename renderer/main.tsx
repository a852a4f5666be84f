import './page-policy';
import './editor/monaco-setup';

import { createRoot } from 'react-dom/client';

import { createApi } from './api/transport';
import { App } from './components/App';
import { createWorkbenchStore } from './store/store';

const store = createWorkbenchStore(createApi());
createRoot(document.getElementById('root')!).render(<App store={store} />);
